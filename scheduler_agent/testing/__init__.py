"""Parts for tests and honest cassettes: a scripted Messages API on loopback, and a real PostgreSQL.

`scripted_server` answers `POST /v1/messages` in the exact wire format (like httpx's MockTransport or
pydantic-ai's TestModel, but over real HTTP so the real SDK runs); `booking_script` is a scripted booking;
`postgres` starts a PostgreSQL server in a temporary folder. Only the tests, the lessons, the benchmarks
and the package root (which exports `ScriptedServer`) import this package; the fault points the product
code marks are `agent/faults.py`.
"""
