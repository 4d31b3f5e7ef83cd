import type { ResponseBody } from '@svc/sdk';
import { useMemo } from 'react';
import { operations } from '../api.js';
import { dayToSeconds, formatDay, total } from '../chart-axis.js';
import { Chart, type ChartSeries } from '../chart.js';
import { formatCredits, formatLatency, formatPercent } from '../format.js';
import { Loaded, Page, useResource } from '../ui.js';

type CreditsDay = ResponseBody<'GET /v1/stats/credits'>['data'][number];
type WebhooksDay = ResponseBody<'GET /v1/stats/webhooks'>['data'][number];

const DAYS = 30;
const PERIOD = `Last ${DAYS} days`;

export function OverviewPage() {
  const overview = useResource(() => operations.getStatsOverview(), []);
  const credits = useResource(() => operations.getCreditStats({ query: { days: DAYS } }), []);
  const webhooks = useResource(() => operations.getWebhookStats({ query: { days: DAYS } }), []);
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
          <Loaded resource={credits}>{({ data }) => <CreditsChart days={data} />}</Loaded>
        </section>
        <section className="panel" aria-labelledby="webhooks-chart">
          <h2 id="webhooks-chart">Webhook delivery attempts and latency per day</h2>
          <Loaded resource={webhooks}>{({ data }) => <WebhooksChart days={data} />}</Loaded>
        </section>
      </div>
    </Page>
  );
}

function CreditsChart(props: { days: readonly CreditsDay[] }) {
  const { days } = props;
  // Memoized: a new array would make the chart draw itself again on every render of the page.
  const { x, added, deducted, series } = useMemo(() => {
    const added = days.map((day) => day.added);
    const deducted = days.map((day) => day.deducted);
    const series: ChartSeries[] = [
      { label: 'Added', values: added, color: '#2f9e44', bars: true },
      { label: 'Deducted', values: deducted, color: '#e8590c', bars: true },
    ];
    return { x: days.map((day) => dayToSeconds(day.day)), added, deducted, series };
  }, [days]);
  if (total(added) + total(deducted) === 0)
    return <p className="state state-empty">No credits added or deducted in the last {DAYS} days.</p>;
  const today = days.at(-1);
  return (
    <Chart
      testId="chart-credits"
      summary={`Credits per day over ${DAYS} days; today ${formatCredits(today?.added ?? 0)} added and ${formatCredits(today?.deducted ?? 0)} deducted.`}
      x={x}
      xAxis="days"
      series={series}
      legend={(index) => {
        const day = index === null ? undefined : days[index];
        if (day === undefined) return { title: PERIOD, values: [formatCredits(total(added)), formatCredits(total(deducted))] };
        return { title: formatDay(dayToSeconds(day.day)), values: [formatCredits(day.added), formatCredits(day.deducted)] };
      }}
      formatValue={formatCredits}
    />
  );
}

/**
 * Attempts per day as stacked bars (succeeded, failed on top), so a few days of data still read as
 * bars on a 30-day axis, and the average latency as a line with its points on the right axis.
 */
function WebhooksChart(props: { days: readonly WebhooksDay[] }) {
  const { days } = props;
  const { x, series } = useMemo(() => {
    const series: ChartSeries[] = [
      { label: 'Succeeded', values: days.map((day) => day.succeeded), color: '#2f9e44', bars: true },
      {
        label: 'Failed',
        values: days.map((day) => day.attempts),
        barBase: days.map((day) => day.succeeded),
        color: '#e03131',
        bars: true,
      },
      { label: 'Average latency', values: days.map((day) => day.latency_ms_avg), color: '#ae3ec9', rightAxis: true },
    ];
    return { x: days.map((day) => dayToSeconds(day.day)), series };
  }, [days]);
  if (days.every((day) => day.attempts === 0)) return <p className="state state-empty">No webhook attempts in the last {DAYS} days.</p>;
  const attempts = total(days.map((day) => day.attempts));
  const succeeded = total(days.map((day) => day.succeeded));
  // The period's average latency weighs each day by its attempts.
  const latencySum = total(days.map((day) => (day.latency_ms_avg === null ? 0 : day.latency_ms_avg * day.attempts)));
  const last = [...days].reverse().find((day) => day.attempts > 0);
  const rate = (ratio: number | null) => (ratio === null ? 'no attempts' : `${formatPercent(ratio)} succeeded`);
  return (
    <Chart
      testId="chart-webhooks"
      summary={`Webhook attempts per day over ${DAYS} days; latest day ${formatPercent(last?.success_rate ?? null)} succeeded, average latency ${formatLatency(last?.latency_ms_avg ?? null)}.`}
      x={x}
      xAxis="days"
      series={series}
      legend={(index) => {
        const day = index === null ? undefined : days[index];
        if (day === undefined)
          return {
            title: `${PERIOD} · ${rate(succeeded / attempts)}`,
            values: [formatCredits(succeeded), formatCredits(attempts - succeeded), formatLatency(latencySum / attempts)],
          };
        return {
          title: `${formatDay(dayToSeconds(day.day))} · ${rate(day.success_rate)}`,
          values: [formatCredits(day.succeeded), formatCredits(day.attempts - day.succeeded), formatLatency(day.latency_ms_avg)],
        };
      }}
      formatValue={formatCredits}
      formatRight={formatLatency}
    />
  );
}
