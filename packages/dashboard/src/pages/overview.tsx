import { Chart, dayToSeconds } from '../chart.js';
import { formatCredits, formatLatency, formatPercent } from '../format.js';
import { Loaded, Page, useResource } from '../ui.js';

interface Overview {
  users: number;
  wallets: number;
  credits_in_circulation: number;
  events_today: number;
  as_of: string;
}
interface CreditsDay {
  day: string;
  added: number;
  deducted: number;
}
interface WebhooksDay {
  day: string;
  attempts: number;
  success_rate: number | null;
  latency_ms_avg: number | null;
}

const DAYS = 30;
const PERCENT_RANGE = [0, 100] as const;

export function OverviewPage() {
  const overview = useResource<Overview>('/v1/stats/overview');
  const credits = useResource<{ data: CreditsDay[] }>(`/v1/stats/credits?days=${DAYS}`);
  const webhooks = useResource<{ data: WebhooksDay[] }>(`/v1/stats/webhooks?days=${DAYS}`);
  return (
    <Page
      title="Overview"
      actions={
        <button
          type="button"
          onClick={() => {
            overview.reload();
            credits.reload();
            webhooks.reload();
          }}
        >
          Refresh
        </button>
      }
    >
      <Loaded resource={overview}>
        {(data) => (
          <dl className="cards" data-testid="overview-counts">
            <div className="card">
              <dt>Users</dt>
              <dd>{formatCredits(data.users)}</dd>
            </div>
            <div className="card">
              <dt>Wallets</dt>
              <dd>{formatCredits(data.wallets)}</dd>
            </div>
            <div className="card">
              <dt>Credits in circulation</dt>
              <dd data-testid="credits-in-circulation">{formatCredits(data.credits_in_circulation)}</dd>
            </div>
            <div className="card">
              <dt>Events today</dt>
              <dd>{formatCredits(data.events_today)}</dd>
            </div>
          </dl>
        )}
      </Loaded>
      <div className="grid-2">
        <section className="panel" aria-labelledby="credits-chart">
          <h2 id="credits-chart">Credits added and deducted per day</h2>
          <Loaded resource={credits}>
            {({ data }) => {
              const total = data.reduce((sum, day) => sum + day.added + day.deducted, 0);
              if (total === 0) return <p className="state state-empty">No credits added or deducted in the last {DAYS} days.</p>;
              const today = data.at(-1);
              return (
                <Chart
                  testId="chart-credits"
                  summary={`Credits per day over ${DAYS} days; today ${formatCredits(today?.added ?? 0)} added and ${formatCredits(today?.deducted ?? 0)} deducted.`}
                  x={data.map((day) => dayToSeconds(day.day))}
                  series={[
                    { label: 'Added', values: data.map((day) => day.added), color: '#2f9e44', bars: true },
                    { label: 'Deducted', values: data.map((day) => day.deducted), color: '#e8590c', bars: true },
                  ]}
                  formatValue={formatCredits}
                />
              );
            }}
          </Loaded>
        </section>
        <section className="panel" aria-labelledby="webhooks-chart">
          <h2 id="webhooks-chart">Webhook delivery success rate and latency</h2>
          <Loaded resource={webhooks}>
            {({ data }) => {
              if (data.every((day) => day.attempts === 0))
                return <p className="state state-empty">No webhook attempts in the last {DAYS} days.</p>;
              const last = [...data].reverse().find((day) => day.attempts > 0);
              return (
                <Chart
                  testId="chart-webhooks"
                  summary={`Webhook attempts per day over ${DAYS} days; latest day ${formatPercent(last?.success_rate ?? null)} succeeded, average latency ${formatLatency(last?.latency_ms_avg ?? null)}.`}
                  x={data.map((day) => dayToSeconds(day.day))}
                  series={[
                    {
                      label: 'Success rate',
                      values: data.map((day) => (day.success_rate === null ? null : day.success_rate * 100)),
                      color: '#1c7ed6',
                    },
                    { label: 'Average latency', values: data.map((day) => day.latency_ms_avg), color: '#ae3ec9', rightAxis: true },
                  ]}
                  yRange={PERCENT_RANGE}
                  formatValue={(value) => `${Math.round(value)}%`}
                  formatRight={formatLatency}
                />
              );
            }}
          </Loaded>
        </section>
      </div>
    </Page>
  );
}
