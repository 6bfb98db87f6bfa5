-- redolab-script: db2_archived_logs
-- The archived log files in the recovery history (operation X: archive log), with when each was
-- archived. LOCATION is last: it may hold spaces or be null.
SELECT DBPARTITIONNUM, START_TIME, COALESCE(NULLIF(END_TIME, ''), START_TIME) AS END_TIME, OPERATIONTYPE,
       FIRSTLOG, LOCATION
  FROM SYSIBMADM.DB_HISTORY
 WHERE OPERATION = 'X'
 ORDER BY DBPARTITIONNUM, START_TIME, FIRSTLOG;
