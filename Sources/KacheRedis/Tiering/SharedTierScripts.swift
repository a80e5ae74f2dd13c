/// The Lua scripts behind ``SharedPool`` and ``SharedQueue``. Each runs
/// atomically on the node that holds its keys (all under one hash tag).
enum SharedTierScripts {
    /// Width of the zero-padded write sequence that starts a Pool member.
    static let sequenceDigits = 20

    /// KEYS: order (zset), values (hash), members (hash), sequence (string).
    /// ARGV: key, record, expiry µs, now µs, capacity.
    /// Returns {expired keys, evicted keys}.
    static let poolSet = RedisScript("""
        local now = tonumber(ARGV[4])
        local expired = {}
        for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)) do
          local key = string.sub(member, 21)
          redis.call('HDEL', KEYS[2], key)
          redis.call('HDEL', KEYS[3], key)
          expired[#expired + 1] = key
        end
        if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
        local evicted = {}
        local old = redis.call('HGET', KEYS[3], ARGV[1])
        if old then
          redis.call('ZREM', KEYS[1], old)
        elseif redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then
          local first = redis.call('ZPOPMIN', KEYS[1])
          local key = string.sub(first[1], 21)
          redis.call('HDEL', KEYS[2], key)
          redis.call('HDEL', KEYS[3], key)
          evicted[1] = key
        end
        local sequence = redis.call('INCR', KEYS[4])
        local member = string.format('%020d', sequence) .. ARGV[1]
        redis.call('ZADD', KEYS[1], ARGV[3], member)
        redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
        redis.call('HSET', KEYS[3], ARGV[1], member)
        return {expired, evicted}
        """)

    /// KEYS as ``poolSet``. ARGV: key. Returns 1 if the key was there.
    static let poolRemove = RedisScript("""
        local member = redis.call('HGET', KEYS[3], ARGV[1])
        if not member then return 0 end
        redis.call('ZREM', KEYS[1], member)
        redis.call('HDEL', KEYS[2], ARGV[1])
        redis.call('HDEL', KEYS[3], ARGV[1])
        return 1
        """)

    /// The expiry of a record: a little-endian Int64 at byte 16 (Lua counts from 1).
    private static let expiryOf = "local function expiry(item) return struct.unpack('<i8', item, 17) end"

    /// KEYS: the list. ARGV: record, capacity, now ns. Returns the items dropped.
    static let queuePush = RedisScript("""
        \(expiryOf)
        local now = tonumber(ARGV[3])
        local capacity = tonumber(ARGV[2])
        local dropped = 0
        while redis.call('LLEN', KEYS[1]) >= capacity do
          local head = redis.call('LINDEX', KEYS[1], 0)
          if not head then break end
          redis.call('LPOP', KEYS[1])
          dropped = dropped + 1
          if expiry(head) > now then break end
        end
        redis.call('RPUSH', KEYS[1], ARGV[1])
        return dropped
        """)

    /// KEYS: the list. ARGV: now ns. Returns the oldest live record, or nil.
    static let queuePop = RedisScript("""
        \(expiryOf)
        local now = tonumber(ARGV[1])
        while true do
          local item = redis.call('LPOP', KEYS[1])
          if not item then return false end
          if string.len(item) >= 48 and expiry(item) > now then return item end
        end
        """)
}
