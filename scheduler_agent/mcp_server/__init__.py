"""`scheduler-agent mcp`: the calendar tools served over the Model Context Protocol, on the official SDK.

calls.py (one call: the loop's dispatch, approval's checks, the idempotency key), server.py (the tools,
their schemas and annotations, approval by elicitation), resources.py (people, hours, preferences, the
system prompt), http.py (Streamable HTTP, its host check and bearer token). The command is cli/mcp.py.
"""
