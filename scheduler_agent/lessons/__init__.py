"""The lessons: the cassettes in `cassettes/`, each showing one thing about the loop.

`catalogue` lists them for `demo`; `scripts` holds what the person types and the scripted replies;
`authoring` records them with the real loop and SDK (`python -m scheduler_agent.lessons.authoring`).
"""
