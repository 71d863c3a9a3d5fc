-- SecretAuditList: a workspace's audit, newest first, a page below the
-- cursor id (0: from the newest); secret_audit_workspace serves it.
SELECT id, name, action, version, actor, at
FROM secret_audit
WHERE workspace = :workspace AND (:before = 0 OR id < :before)
ORDER BY id DESC
LIMIT :lim
