"""Record and replay: cassettes of real Messages API traffic.

`vcr_cassette` is the vcrpy side (matching and middleware); `cassette_file` the readable YAML file and the
setup it carries; `replay` runs a cassette's inputs offline; `record` writes a live session as a cassette.
"""
