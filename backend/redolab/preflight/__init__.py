"""Evidence a DBA pastes for the Pre-flight card: Data Guard Broker VALIDATE outputs and V$RECOVERY_PROGRESS."""
