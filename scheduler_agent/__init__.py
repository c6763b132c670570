"""scheduler-agent: a scheduling agent that is a while-loop around a stateless model.

The message list is the whole of its state; see `scheduler_agent.agent.loop.run_turn`.
"""

__version__ = "0.1.0"
