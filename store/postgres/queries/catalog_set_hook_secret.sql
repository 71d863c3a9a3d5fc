-- SetHookSecret: set, rotate or ('') clear a source's push hook secret;
-- the old one stops working when this commits.
UPDATE git_source SET hook_secret = @hook_secret
WHERE workspace = @workspace AND id = @id
