"""The shipped models: their recipes (`presets`), how to retrain them (`retrain`), and the
figures each is measured by, with its targets (`behaviour`)."""
