"""The protocol logic of each era: one decoded JSON-RPC message in, a reply out.

- legacy: LegacyDispatcher, 2025-11-25 (initialize, sessions, tasks/list, tasks/result)
- modern: ModernDispatcher, 2026-07-28 with the tasks extension; modern_wire (its `_meta`,
  errors and request envelope), subscriptions (subscriptions/listen streams)
- router: which era answers a message, decided once for every transport
"""
