"""The grammar of the message list, checked before anything is sent, and `lint` for files.

`check` walks a list and reports every violation with its position; `IncrementalChecker` checks only
what changed before each request; `lint` reads arrays, dumps and cassettes; `jsondiff` says where two
JSON values first differ.
"""
