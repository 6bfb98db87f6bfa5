-- redolab-script: db2_transaction_log
-- One capture of the cumulative log counters of every active member (MON_GET_TRANSACTION_LOG, Db2 10.1
-- and later): LOG_WRITES in 4 KiB pages, NUM_LOG_WRITE_IO flushes, LOG_WRITE_TIME in ms. Rates come
-- from the deltas between captures, as the redo import reads them.
SELECT CURRENT TIMESTAMP AS SNAPSHOT_TIME, MEMBER, LOG_WRITES, NUM_LOG_WRITE_IO, LOG_WRITE_TIME
  FROM TABLE(MON_GET_TRANSACTION_LOG(-2)) AS T
 ORDER BY MEMBER;
