"""Hostile methods of one's own (``module:object``) that the adversarial plugin tests name in configs."""
