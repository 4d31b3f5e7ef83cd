// The scale benchmark's data (scenarios/scale.js), written by PostgreSQL itself with
// generate_series: at SCALE=1, 10 million ledger transactions (each with its wallet's entry) over
// 100,000 wallets, 1 million users and 1 million sessions, 5 million events with 5 million
// deliveries and their attempts, 1 million audit entries, in 20 projects, the first holding half of
// every table. Each project's rows are spread over the last 90 days. Triggers are off while filling
// (session_replication_role = replica); the per-project counters are then computed as migration
// 0022 does, and the audit chain is filled as if the seal job had chained every entry and movement.

/** Rows per table at SCALE=1. */
export const FULL_SIZE = Object.freeze({
  users: 1_000_000,
  wallets: 100_000,
  transactions: 10_000_000,
  events: 5_000_000,
  audit: 1_000_000,
});

const DAYS = 90;

/**
 * `project(n, total)`: rows 1..total/2 belong to the first project, the rest to the other 19 in
 * turn. Ids are `<prefix><n>`, so a row's project is a function of its number.
 */
function projectOf(projects, total) {
  const list = `array[${projects.map((id) => `'${id}'`).join(',')}]`;
  const half = Math.floor(total / 2);
  return (column) => `(${list})[case when ${column} <= ${half} then 1 else 2 + (${column} % ${projects.length - 1}) end]`;
}

function timeOf(column, total) {
  // Oldest first within each half (the first project's rows, then the others'), so that every
  // project has rows over the whole 90 days up to now: row n of the first half at now - 90 days +
  // n/half of 90 days, and likewise in the second half.
  const half = Math.floor(total / 2);
  const share = `(case when ${column} <= ${half} then ${column}::float8 / ${half} else (${column} - ${half})::float8 / ${total - half} end)`;
  return `to_char((now() at time zone 'utc') - interval '${DAYS} days' + ${share} * interval '${DAYS} days', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** The statements that fill the database, in order, each with a label. */
export function fillStatements(projects, scale) {
  const size = Object.fromEntries(Object.entries(FULL_SIZE).map(([table, rows]) => [table, Math.max(100, Math.round(rows * scale))]));
  const users = projectOf(projects, size.users);
  const wallets = projectOf(projects, size.wallets);
  const transactions = projectOf(projects, size.transactions);
  const events = projectOf(projects, size.events);
  const audit = projectOf(projects, size.audit);
  // A wallet's owner and a transaction's wallet stay in their project: with the same split, row n's
  // project is that of any row m with m % 19 = n % 19 on the same side of the half.
  const walletOf = (n) =>
    `(case when ${n} <= ${Math.floor(size.transactions / 2)} then 1 + (${n} % ${Math.floor(size.wallets / 2)}) ` +
    `else ${Math.floor(size.wallets / 2)} + 1 + (${n} % ${size.wallets - Math.floor(size.wallets / 2)}) end)`;
  return {
    size,
    statements: [
      [
        'users',
        `insert into users (id, project_id, email, email_key, name, roles, metadata, created_at, updated_at)
         select 'usr_s' || n, ${users('n')}, 'u' || n || '@scale.test', 'u' || n || '@scale.test', 'U', '[]', '{}', ${timeOf('n', size.users)}, ${timeOf('n', size.users)}
         from generate_series(1, ${size.users}) n`,
      ],
      [
        'sessions',
        `insert into sessions (id, project_id, user_id, token_hash, refresh_token_hash, refresh_expires_at, chain_id, expires_at, created_at, last_used_at)
         select 'svc_ses_s' || n, ${users('n')}, 'usr_s' || n, md5(n::text), md5('r' || n), '2099-01-01T00:00:00.000Z', 'chn_s' || n,
           '2099-01-01T00:00:00.000Z', ${timeOf('n', size.users)}, ${timeOf('n', size.users)}
         from generate_series(1, ${size.users}) n`,
      ],
      [
        'wallets',
        `insert into wallets (id, project_id, user_id, currency, balance, status, metadata, created_at, updated_at)
         select 'wal_s' || n, ${wallets('n')}, 'usr_s' || n, 'USD', 1000000, 'active', '{}', ${timeOf('n', size.wallets)}, ${timeOf('n', size.wallets)}
         from generate_series(1, ${size.wallets}) n`,
      ],
      [
        'ledger_transactions',
        `insert into ledger_transactions (id, project_id, type, currency, amount, metadata, idempotency_scope, wallet_id, created_at)
         select 'txn_s' || n, ${transactions('n')}, case when n % 4 = 0 then 'debit' else 'credit' end, 'USD', 1 + n % 1000, '{}', '',
           'wal_s' || ${walletOf('n')}, ${timeOf('n', size.transactions)}
         from generate_series(1, ${size.transactions}) n`,
      ],
      [
        'ledger_entries',
        `insert into ledger_entries (project_id, transaction_id, account_id, amount, balance_after, created_at)
         select ${transactions('n')}, 'txn_s' || n, 'wal_s' || ${walletOf('n')}, case when n % 4 = 0 then -(1 + n % 1000) else 1 + n % 1000 end,
           1000000, ${timeOf('n', size.transactions)}
         from generate_series(1, ${size.transactions}) n`,
      ],
      [
        'events',
        `insert into events (id, project_id, type, data, idempotency_key, created_at, dispatched_at)
         select 'evt_s' || n, ${events('n')}, case when n % 3 = 0 then 'wallet.credit.added' else 'user.created' end, '{}', 'k' || n,
           ${timeOf('n', size.events)}, ${timeOf('n', size.events)}
         from generate_series(1, ${size.events}) n`,
      ],
      [
        'webhook_endpoints',
        `insert into webhook_endpoints (id, project_id, url, events, enabled, secret, created_at, updated_at)
         select 'whe_s' || i, p, 'https://hooks.example.test/' || i, '["*"]', 1, 'x', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'
         from unnest(array[${projects.map((id) => `'${id}'`).join(',')}]) with ordinality as t(p, i)`,
      ],
      [
        'webhook_deliveries',
        `insert into webhook_deliveries (id, project_id, endpoint_id, event_id, event_type, status, attempt_count, scheduled_attempt_count, created_at, updated_at)
         select 'whd_s' || n, ${events('n')}, 'whe_s' || (array_position(array[${projects.map((id) => `'${id}'`).join(',')}], ${events('n')})),
           'evt_s' || n, 'user.created', case when n % 20 = 0 then 'failed' else 'succeeded' end, 1, 1, ${timeOf('n', size.events)}, ${timeOf('n', size.events)}
         from generate_series(1, ${size.events}) n`,
      ],
      [
        'webhook_attempts',
        `insert into webhook_attempts (delivery_id, attempt_number, project_id, kind, created_at, status_code, latency_ms)
         select 'whd_s' || n, 1, ${events('n')}, 'scheduled', ${timeOf('n', size.events)}, case when n % 20 = 0 then 500 else 200 end, n % 900
         from generate_series(1, ${size.events}) n`,
      ],
      [
        'audit_log',
        `insert into audit_log (id, project_id, created_at, action, actor_type, actor_id, resource_type, resource_id, outcome, changes)
         select 'aud_a' || n, ${audit('n')}, ${timeOf('n', size.audit)}, (array['invitation.accept', 'invitation.create', 'organization.create', 'organization.update', 'organization.delete'])[1 + n % 5], 'api_key', 'key' || (n % 10), 'wallet',
           'wal_s' || (n % ${size.wallets} + 1), 'success', '{}'
         from generate_series(1, ${size.audit}) n`,
      ],
      [
        // As if the audit seal job had run: every entry and every ledger movement (whose entry id is
        // its transaction's with the prefix aud_, so audit ids above are aud_a…, not aud_s…) has its
        // link in its project's chain, and both sealing cursors stand after them. Without this the
        // service's seal job chains the filled rows every second while the routes are measured.
        // The hashes are placeholders of the right length; nothing measured verifies them.
        'audit_chain',
        `insert into audit_chain (project_id, seq, entry_id, prev_hash, hash, sealed_at)
         with head as materialized (select project_id, max(seq) as seq from audit_chain group by project_id)
         select s.project_id, coalesce(head.seq, 0) + row_number() over (partition by s.project_id order by s.created_at, s.entry_id),
           s.entry_id, md5(s.entry_id) || md5(s.entry_id || '.'), md5(s.entry_id || '#') || md5(s.entry_id || '$'), s.created_at
         from (select project_id, id as entry_id, created_at from audit_log
               union all select project_id, 'aud_' || substr(id, 5), created_at from ledger_transactions where txid is not null) s
           left join head on head.project_id = s.project_id
         where not exists (select 1 from audit_chain c where c.entry_id = s.entry_id)`,
      ],
      [
        'audit cursors',
        `with a as (select txid, id from audit_log where txid is not null order by txid desc, id desc limit 1),
              l as (select txid, id from ledger_transactions where txid is not null order by txid desc, id desc limit 1),
              moved as (update audit_seal_cursor set txid = a.txid, entry_id = a.id from a where audit_seal_cursor.id = 1 returning 1)
         update audit_ledger_cursor set txid = l.txid, entry_id = l.id from l where audit_ledger_cursor.id = 1`,
      ],
      [
        'project_counts',
        `insert into project_counts (project_id, users, wallets)
         select id, (select count(*) from users where users.project_id = projects.id), (select count(*) from wallets where wallets.project_id = projects.id)
         from projects on conflict (project_id) do update set users = excluded.users, wallets = excluded.wallets`,
      ],
    ],
  };
}
