-- redolab-script: oracle_database
-- The database's identity and settings. Dates in V$ARCHIVED_LOG are the host's clock (SYSDATE), not
-- DBTIMEZONE: HOST_UTC_OFFSET is SYSTIMESTAMP's offset now, which reads those dates. The protection mode
-- and DATA_GUARD_SYNC_LATENCY (11.2 and later; NULL before) are judged on the Pre-flight card.
PROMPT redolab-step: database
SELECT d.dbid, d.name, d.db_unique_name, d.database_role, d.platform_name, d.log_mode, d.force_logging,
       i.version, DBTIMEZONE AS db_time_zone, TO_CHAR(SYSTIMESTAMP, 'TZH:TZM') AS host_utc_offset,
       d.protection_mode,
       (SELECT p.value FROM v$parameter p WHERE p.name = 'data_guard_sync_latency') AS data_guard_sync_latency
  FROM v$database d, v$instance i;
