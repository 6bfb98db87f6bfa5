"""The published documents redolab's formulas come from, named as a DBA finds them (the UI cites these,
never the project's own file names for them)."""

# The oratcptest walk-through: redo rate per archived log, peak + 30 %, the connection ladder, the MTU task,
# instantiation time, two SYNC standbys under Maximum Protection.
# Its title: "Assessing and Tuning Network Performance for Data Guard and RMAN".
ORACLE_NETWORK_NOTE = "Oracle's network assessment note (Doc ID 2064368.1)"
# Bandwidth from the redo rate, socket buffers = 3 x BDP, ASYNC transport lag as the data-loss exposure.
MAA_TRANSPORT_PAPER = "Oracle MAA's “Redo Transport & Network Best Practices”"
# Disk write fit, TCP window = send rate x RTT, DB2_HADR_BUF_SIZE, the db2pd diagnosis.
IBM_HADR_SIMULATOR = "IBM's “HADR Simulator use case” guide"
# SYNC under an emulated 100 ms delay: latency, not bandwidth, sets the commit time.
SYNC_DELAY_ARTICLE = "Martin Bach's “Data Guard and Synchronous Redo Transport in 12c”"
