"""The grader of `make grade`, one module per task (scripts/grade.py is its command line; README.md lists the modules)."""
