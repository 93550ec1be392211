"""The protocol logic of each era (legacy: 2025-11-25, modern: 2026-07-28 with the tasks
extension), and the router that picks a message's era for every transport."""
