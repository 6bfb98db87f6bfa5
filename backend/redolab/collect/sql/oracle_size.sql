-- redolab-script: oracle_size
-- The size an instantiation copies. In a CDB's root DBA_DATA_FILES lists the root's files only;
-- V$DATAFILE (from the control file) lists every container's.
PROMPT redolab-step: size
SELECT (SELECT NVL(SUM(bytes), 0) FROM dba_data_files) AS datafile_bytes,
       (SELECT NVL(SUM(bytes), 0) FROM dba_temp_files) AS tempfile_bytes,
       (SELECT NVL(SUM(bytes), 0) FROM v$datafile) AS controlfile_datafile_bytes
  FROM dual;
-- Each file an instantiation copies, and whether its tablespace is a bigfile one (one file that RMAN
-- copies on one channel unless SECTION SIZE cuts it). In a CDB's root these are the root's files only.
PROMPT redolab-step: datafiles
SELECT d.file_id, d.tablespace_name, d.bytes, t.bigfile
  FROM dba_data_files d
  JOIN dba_tablespaces t ON t.tablespace_name = d.tablespace_name
 ORDER BY d.file_id;
