import { StrictMode, useEffect, useId, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { hasCode, loadSession, onSignedOut, operations, type Session, signIn, signOut } from './api.js';
import { formatDateTime } from './format.js';
import { ApiKeysPage } from './pages/api-keys.js';
import { AuditPage } from './pages/audit.js';
import { EventPage, EventsPage } from './pages/events.js';
import { EventTypesPage } from './pages/event-types.js';
import { OrganizationPage, OrganizationsPage } from './pages/organizations.js';
import { OverviewPage } from './pages/overview.js';
import { SettingsPage } from './pages/settings.js';
import { SigningKeysPage } from './pages/signing-keys.js';
import { UserPage, UsersPage } from './pages/users.js';
import { WalletPage } from './pages/wallet.js';
import { WalletsPage } from './pages/wallets.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { matchPath, usePath } from './router.js';
import './styles.css';
import { ErrorBox, Link, Loading, Page, useResource } from './ui.js';

const NAV: readonly { path: string; label: string }[] = [
  { path: '/', label: 'Overview' },
  { path: '/users', label: 'Users' },
  { path: '/wallets', label: 'Wallets' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/events', label: 'Events' },
  { path: '/event-types', label: 'Event catalog' },
  { path: '/api-keys', label: 'API keys' },
  { path: '/signing-keys', label: 'Signing keys' },
  { path: '/organizations', label: 'Organizations' },
  { path: '/audit-log', label: 'Audit log' },
  { path: '/settings', label: 'Settings' },
];

function route(path: string, session: Session) {
  const one = (pattern: string) => matchPath(pattern, path)?.['id'];
  let id: string | undefined;
  if (path === '/') return <OverviewPage />;
  if (path === '/users') return <UsersPage />;
  if ((id = one('/users/:id')) !== undefined) return <UserPage key={id} id={id} />;
  if (path === '/wallets') return <WalletsPage />;
  if ((id = one('/wallets/:id')) !== undefined) return <WalletPage key={id} id={id} />;
  if (path === '/webhooks') return <WebhooksPage />;
  if ((id = one('/webhooks/:id')) !== undefined) return <WebhookPage key={id} id={id} />;
  if (path === '/events') return <EventsPage />;
  if (path === '/event-types') return <EventTypesPage />;
  if ((id = one('/events/:id')) !== undefined) return <EventPage key={id} id={id} />;
  if (path === '/api-keys') return <ApiKeysPage currentKeyId={session.key_id} />;
  if (path === '/signing-keys') return <SigningKeysPage projectId={session.project_id} />;
  if (path === '/organizations') return <OrganizationsPage />;
  if ((id = one('/organizations/:id')) !== undefined) return <OrganizationPage key={id} id={id} />;
  if (path === '/audit-log') return <AuditPage />;
  if (path === '/settings') return <SettingsPage />;
  return (
    <Page title="Not found">
      <p>
        No page here. <Link to="/">Go to the overview</Link>.
      </p>
    </Page>
  );
}

/**
 * The project's name from GET /v1/project, its id in the tooltip; the id alone only when the name
 * cannot be read.
 */
function ProjectName(props: { session: Session }) {
  const { session } = props;
  const project = useResource(() => operations.getProject(), []);
  const name = project.data?.name ?? (project.error === undefined ? '' : session.project_id);
  return (
    <span
      className="muted project"
      data-testid="project-name"
      title={`${session.project_id}, signed in with ${session.key_id} until ${formatDateTime(session.expires_at)}`}
    >
      {name}
    </span>
  );
}

function SignIn(props: { onSignedIn: (session: Session) => void; reason?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>(undefined);
  const [pending, setPending] = useState(false);
  const id = useId();
  const hintId = useId();
  return (
    <main className="sign-in" id="main">
      <form
        className="panel"
        aria-labelledby="sign-in-title"
        onSubmit={(event) => {
          event.preventDefault();
          setPending(true);
          setError(undefined);
          signIn(key).then(
            (session) => {
              setKey('');
              props.onSignedIn(session);
            },
            (caught: unknown) => {
              setError(caught);
              setPending(false);
            },
          );
        }}
      >
        <h1 id="sign-in-title">svc dashboard</h1>
        {props.reason === undefined ? null : <p className="notice">{props.reason}</p>}
        <label htmlFor={id}>Secret key</label>
        <input
          id={id}
          type="password"
          autoComplete="off"
          spellCheck={false}
          placeholder="svc_sk_…"
          aria-describedby={hintId}
          value={key}
          onChange={(event) => setKey(event.target.value)}
          required
          autoFocus
        />
        <p id={hintId} className="muted">
          Paste a secret key of the project once. It is exchanged for a 12-hour session cookie and is not kept in this browser.
        </p>
        {error === undefined ? null : (
          <div className="state state-error" role="alert">
            <p>
              {hasCode(error, 'invalid_api_key')
                ? 'That key was not accepted. Check that it is complete, starts with svc_sk_ and has not been revoked.'
                : error instanceof Error
                  ? error.message
                  : 'Sign-in failed; try again.'}
            </p>
          </div>
        )}
        <button type="submit" className="primary" disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

function App() {
  const [session, setSession] = useState<Session | undefined | null>(undefined);
  const [startError, setStartError] = useState<unknown>(undefined);
  const [reason, setReason] = useState<string | undefined>(undefined);
  const path = usePath();
  useEffect(() => {
    loadSession().then(
      (loaded) => setSession(loaded ?? null),
      (error: unknown) => setStartError(error),
    );
    return onSignedOut(() => {
      setReason('The session ended (signed out, expired, or its key was revoked). Sign in again.');
      setSession(null);
    });
  }, []);
  useEffect(() => {
    document.getElementById('page-title')?.focus();
  }, [path]);
  if (startError !== undefined) return <ErrorBox error={startError} retry={() => window.location.reload()} />;
  if (session === undefined) return <Loading label="Opening the dashboard…" />;
  if (session === null)
    return (
      <SignIn
        {...(reason === undefined ? {} : { reason })}
        onSignedIn={(opened) => {
          setReason(undefined);
          setSession(opened);
        }}
      />
    );
  const active = (itemPath: string) => (itemPath === '/' ? path === '/' : path === itemPath || path.startsWith(`${itemPath}/`));
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">svc</span>
        <ProjectName session={session} />
        <button
          type="button"
          onClick={() => {
            void signOut().finally(() => {
              setReason('Signed out.');
              setSession(null);
            });
          }}
        >
          Sign out
        </button>
      </header>
      <div className="layout">
        <nav className="side" aria-label="Dashboard">
          <ul>
            {NAV.map((item) => (
              <li key={item.path}>
                <Link to={item.path} aria-current={active(item.path) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {route(path, session)}
        </main>
      </div>
    </>
  );
}

const root = document.getElementById('root');
if (root !== null)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
