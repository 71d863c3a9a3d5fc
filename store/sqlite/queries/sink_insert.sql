-- SinkInsert: one new event sink, as the core checked it. A duplicate
-- (workspace, id) is a conflict.
INSERT INTO event_sink (workspace, id, kind, url, subject, types, secret, enabled,
                        after_seq, created_by, created_at, updated_at)
VALUES (:workspace, :id, :kind, :url, :subject, :types, :secret, :enabled,
        :after_seq, :created_by, :now, :now)
