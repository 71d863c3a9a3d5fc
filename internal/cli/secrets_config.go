package cli

import (
	"errors"

	"github.com/windforce/windforce/secrets"
)

// secretsKeyOf is the key of workspace secrets f configures:
// WINDFORCE_SECRETS_KEY, else derived from WINDFORCE_SECRET; the zero Key
// (with secrets.ErrNoKey) when neither is set.
func (f *config) secretsKeyOf() (secrets.Key, error) {
	return secrets.KeyFromConfig(f.secretsKey, []byte(f.secret))
}

// checkSecretsKey refuses a WINDFORCE_SECRETS_KEY that is not a key. No
// key at all is allowed: the API then refuses to set secrets (503).
func (f *config) checkSecretsKey() error {
	if _, err := f.secretsKeyOf(); err != nil && !errors.Is(err, secrets.ErrNoKey) {
		return &UsageError{Msg: err.Error()}
	}
	return nil
}
