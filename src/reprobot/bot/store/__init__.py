"""The App's durable state: the database engine and migrations, its tables, the job ledger and
the records of what the App wrote."""
