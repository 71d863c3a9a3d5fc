-- SecretAuditInsert: one entry, in the transaction of the change itself.
INSERT INTO secret_audit (workspace, name, action, version, actor, at)
VALUES (:workspace, :name, :action, :version, :actor, :at)
