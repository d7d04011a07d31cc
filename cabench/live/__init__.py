"""Live evaluation: tasks, an endpoint client, a replay server and the resumable live/collect runs."""
