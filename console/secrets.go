package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/windforce/windforce/secrets"
)

// secretForm is the set form's name and description and the error per
// field. It never holds the value: a form shown again after an error
// asks for the value anew, so the value is never in a page.
type secretForm struct {
	Name, Description string
	Errors            map[string]string
}

type secretsData struct {
	Secrets []secrets.Secret
	Form    secretForm
	Flash   string
	// Max is the largest value, in bytes (the form says so).
	Max int
}

// secretsPage lists the workspace's secrets (never a value) and, for an
// admin, the set form.
func (c *Console) secretsPage(q *req) error {
	return c.showSecrets(q, http.StatusOK, secretsData{Flash: secretFlash[q.r.URL.Query().Get("done")]})
}

func (c *Console) showSecrets(q *req, status int, d secretsData) error {
	list, err := c.cfg.Store.ListSecrets(q.r.Context(), q.ws)
	if err != nil {
		return err
	}
	d.Secrets, d.Max = list, secrets.MaxValueBytes
	c.render(q.w, status, "secrets", "", c.view(q, "Secrets", d))
	return nil
}

// setSecret creates or replaces a secret from the form, as the API's PUT
// does. A refused form is shown again (422) with the error next to its
// field and the value field empty; nothing is stored.
func (c *Console) setSecret(q *req) error {
	r := q.r
	f := secretForm{Name: strings.TrimSpace(r.PostFormValue("name")), Description: r.PostFormValue("description"),
		Errors: map[string]string{}}
	value := []byte(r.PostFormValue("value"))
	if c.cfg.SecretsKey.IsZero() {
		return &pageError{status: http.StatusServiceUnavailable, msg: "This server has no secrets key (set WINDFORCE_SECRETS_KEY or WINDFORCE_SECRET)."}
	}
	sec, created, err := c.cfg.Store.PutSecret(r.Context(), c.cfg.SecretsKey, secrets.Put{
		Workspace: q.ws, Name: f.Name, Description: f.Description, Value: value, Actor: q.u.name()})
	clear(value)
	if field, msg, ok := secretFieldError(err); ok {
		f.Errors[field] = msg
		return c.showSecrets(q, http.StatusUnprocessableEntity, secretsData{Form: f})
	}
	if err != nil {
		return err
	}
	done := "replaced"
	if created {
		done = "created"
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/secrets?done="+done+"&v="+strconv.FormatInt(sec.Version, 10))
	return nil
}

// secretFieldError is the field and message of a refused secret; ok is
// false for any other error. No message repeats the value.
func secretFieldError(err error) (field, msg string, ok bool) {
	switch {
	case err == nil:
		return "", "", false
	case errors.Is(err, secrets.ErrInvalidName):
		return "name", "A name is a letter or _ then up to 63 letters, digits or _ (it becomes an environment variable).", true
	case errors.Is(err, secrets.ErrEmptyValue):
		return "value", "Enter the value.", true
	case errors.Is(err, secrets.ErrValueTooLarge):
		return "value", "The value is over " + strconv.Itoa(secrets.MaxValueBytes) + " bytes.", true
	case errors.Is(err, secrets.ErrValueNotText):
		return "value", "The value must be text (UTF-8) without NUL characters.", true
	case errors.Is(err, secrets.ErrInvalidDescription):
		return "description", "The description is too long or holds control characters.", true
	}
	return "", "", false
}

// deleteSecretConfirm asks before a delete: jobs that reference the
// secret fail at claim from then on.
func (c *Console) deleteSecretConfirm(q *req) error {
	sec, err := c.pathSecret(q)
	if err != nil {
		return err
	}
	return c.page(q, "secret_delete", "Delete secret "+sec.Name, sec)
}

// deleteSecret deletes the secret (audited as the logged-in token).
func (c *Console) deleteSecret(q *req) error {
	if err := c.cfg.Store.DeleteSecret(q.r.Context(), q.ws, q.r.PathValue("name"), q.u.name()); err != nil {
		return err
	}
	redirect(q.w, q.r, "/w/"+url.PathEscape(q.ws)+"/secrets?done=deleted")
	return nil
}

// pathSecret is the path's secret, as listed.
func (c *Console) pathSecret(q *req) (secrets.Secret, error) {
	list, err := c.cfg.Store.ListSecrets(q.r.Context(), q.ws)
	if err != nil {
		return secrets.Secret{}, err
	}
	for _, s := range list {
		if s.Name == q.r.PathValue("name") {
			return s, nil
		}
	}
	return secrets.Secret{}, &pageError{status: http.StatusNotFound, msg: "No such secret.", err: secrets.ErrNotFound}
}

type secretAuditData struct {
	Entries []secrets.AuditEntry
	// Older is the link to the next page, "" on the last.
	Older string
}

// secretAuditPage shows who created, replaced and deleted which secret
// when, newest first, a page at a time.
func (c *Console) secretAuditPage(q *req) error {
	var before int64
	if v := q.r.URL.Query().Get("cursor"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return &pageError{status: http.StatusBadRequest, msg: "That page of the audit does not exist."}
		}
		before = n
	}
	entries, next, err := c.cfg.Store.SecretAudit(q.r.Context(), q.ws, before, 50)
	if err != nil {
		return err
	}
	d := secretAuditData{Entries: entries}
	if next != 0 {
		d.Older = "/w/" + url.PathEscape(q.ws) + "/secrets/audit?cursor=" + strconv.FormatInt(next, 10)
	}
	return c.page(q, "secrets_audit", "Secrets audit", d)
}

// secretFlash is the message after a change, by the redirect's ?done=
// code: fixed texts only.
var secretFlash = map[string]string{
	"created": "Secret created.", "replaced": "Secret replaced with a new version.", "deleted": "Secret deleted.",
}
