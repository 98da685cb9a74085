"""One module per `grade` command: each reads its parsed options and calls the public APIs.

`cli` imports the module of the command it runs, and only that one, so that `grade --help`
imports none of the library.
"""
