"""Tools from MCP servers a person names (`--mcp NAME=COMMAND`, `--mcp NAME=URL`, or the config file), for the loop.

The loop stays synchronous: the MCP client runs in one background event-loop thread per process (anyio's
blocking portal, `portal.py`), and each call waits on it. The pieces:

- `servers.py`: a server as the person names it (`ServerSpec`), the `--mcp` value and the config file read;
  no SDK import, so that a command's start-up stays fast.
- `portal.py`: the process's event-loop thread.
- `connection.py`: one connected server: its tools listed, a call made under the call's deadline, its result
  made into the content of a `tool_result`.
- `toolbox.py`: the calendar's tools plus the servers' (`NAME__tool`), approval asked for each MCP tool
  unless its server is trusted and the tool is annotated read-only.
- `turn.py`: what a conversation stores about its servers (their names and the tools they offered, never a
  command), the refusal of a resume that lacks one, and `list_and_store` for the workers.
"""
