-- Two waiting private tables never share an invite code: a host whose freshly
-- drawn code is taken draws another.

CREATE UNIQUE INDEX tickets_live_invite_idx ON tickets (invite_code)
    WHERE is_host AND state IN ('queued', 'matching');
