-- redolab-script: oracle_archive_dests
-- The archive destinations in use: the local ones (TARGET PRIMARY) and the standby ones with their
-- transport mode, and the attributes that decide behaviour under failure (judged on the Pre-flight card).
PROMPT redolab-step: archive_dests
SELECT dest_id, dest_name, status, target, destination, transmit_mode, affirm, valid_role, db_unique_name,
       net_timeout, compression, reopen_secs, max_failure, max_connections, delay_mins, alternate
  FROM v$archive_dest
 WHERE status <> 'INACTIVE'
 ORDER BY dest_id;
