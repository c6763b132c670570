"""Parts for tests and honest cassettes: a scripted Messages API on loopback, and test-only fault points.

`scripted_server` answers `POST /v1/messages` in the exact wire format (like httpx's MockTransport or
pydantic-ai's TestModel, but over real HTTP so the real SDK runs); `faults` kills or pauses a process at
named points when a test asks for it.
"""
