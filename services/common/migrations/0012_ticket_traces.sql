-- Traces: a ticket keeps the trace context (W3C traceparent) of the call that
-- queued it, so that whichever replica makes its table carries that trace on
-- into the game service. NULL while tracing is off. A nullable column with no
-- default rewrites no row.

ALTER TABLE tickets ADD COLUMN trace_parent text;
