-- Push hooks that git hosts call (DESIGN §10). A source's hook_secret is
-- what GitHub and Gitea/Forgejo key the HMAC-SHA256 of a push's body with
-- and what GitLab sends as X-Gitlab-Token. It is kept as text, not hashed,
-- as webhook_secret is: the server must recompute the HMAC. '' means none,
-- and then only a bearer token may call the source's hook.
ALTER TABLE git_source ADD COLUMN hook_secret text NOT NULL DEFAULT '';
