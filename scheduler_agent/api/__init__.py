"""The one place that talks to the Anthropic SDK (`client`), and the assembler of streamed replies (`sse`).

Imported only on paths that call the model: `import anthropic` costs about a second.
"""
