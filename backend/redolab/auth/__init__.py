"""Level 1 (with remote): users, roles, sessions, API tokens and the audit log: models, service,
deps (CurrentUser, OperatorUser, ...), guard (login throttle), api. Imports core only."""
