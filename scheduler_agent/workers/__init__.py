"""Workers: turns submitted to a queue, claimed under a lease and run by any worker process (issue 16).

queue (submit, claim, finish: what needs the model), worker (the run loop: slots, lease renewal,
graceful stop), approvals (a side effect waits for `approve`/`decline` instead of a terminal).
"""
