"""Planning: pure functions from measured numbers to verdicts, estimates and settings; and the plan."""
