"""The vocabulary: snapshots, change sets, findings, configuration, budgets, quoting."""
