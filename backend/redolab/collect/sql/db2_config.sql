-- redolab-script: db2_config
-- The database configuration the plan reads: log file size (4 KiB pages), log buffer, HADR settings
-- and the first archive method. VALUE is last: it may hold spaces or be empty.
SELECT DBPARTITIONNUM, NAME, VALUE
  FROM SYSIBMADM.DBCFG
 WHERE NAME IN ('logfilsiz', 'logbufsz', 'hadr_syncmode', 'hadr_peer_window', 'hadr_spool_limit', 'logarchmeth1')
 ORDER BY DBPARTITIONNUM, NAME;
