// Package secrets is the cryptography and the vocabulary of workspace
// secrets (DESIGN §8): the key, sealing and opening one value, the rules
// for names and values, and the types the store and the API share.
//
//	WINDFORCE_SECRETS_KEY (32 bytes, base64 or hex)
//	  or HKDF-SHA256(WINDFORCE_SECRET, info "windforce secrets v1")
//	        │
//	        ▼ Key ── ID(): a short fingerprint stored with each row
//	Seal(key, workspace, name, version, value)
//	  = nonce(12 random bytes) ‖ AES-256-GCM(value padded to 64 bytes,
//	    associated data = len‖workspace ‖ len‖name ‖ version)
//
// The associated data binds a ciphertext to its row: the same bytes under
// another workspace, name or version do not open, so whoever can write the
// database but does not hold the key cannot move one secret into another's
// place. Only the server (to seal what an admin sets) and the worker (to
// open what a job is given at claim) hold the key; the database alone holds
// names, descriptions, versions, who changed what and when, and
// ciphertexts that show a value's length to within 64 bytes.
package secrets
