-- WebhookSecret: the secret signed webhooks of one action are checked with.
SELECT secret
FROM webhook_secret
WHERE workspace = :workspace AND app_key = :app_key AND action_key = :action_key
