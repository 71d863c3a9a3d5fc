-- WebhookPutSecret: create or rotate the webhook secret of an action that
-- exists in the catalog. No row written means no such action (the caller
-- answers 404); the old secret stops working the moment this commits.
INSERT INTO webhook_secret (workspace, app_key, action_key, secret, created_at)
SELECT workspace, app_key, action_key, :secret, :now
FROM action
WHERE workspace = :workspace AND app_key = :app_key AND action_key = :action_key
ON CONFLICT (workspace, app_key, action_key)
DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at
