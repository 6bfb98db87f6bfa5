-- redolab-script: oracle_database
-- The database's identity and settings. Dates in V$ARCHIVED_LOG are the host's clock (SYSDATE), not
-- DBTIMEZONE: HOST_UTC_OFFSET is SYSTIMESTAMP's offset now, which reads those dates.
PROMPT redolab-step: database
SELECT d.dbid, d.name, d.db_unique_name, d.database_role, d.platform_name, d.log_mode, d.force_logging,
       i.version, DBTIMEZONE AS db_time_zone, TO_CHAR(SYSTIMESTAMP, 'TZH:TZM') AS host_utc_offset
  FROM v$database d, v$instance i;
