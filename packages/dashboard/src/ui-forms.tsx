import { type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';

/** A labelled search box that applies on Enter or on the button (and clears with Escape). */
export function SearchBox(props: { label: string; placeholder?: string; value: string; onSearch: (value: string) => void }) {
  const [text, setText] = useState(props.value);
  const id = useId();
  useEffect(() => setText(props.value), [props.value]);
  return (
    <form
      className="search"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        props.onSearch(text.trim());
      }}
    >
      <label htmlFor={id}>{props.label}</label>
      <div className="search-row">
        <input
          id={id}
          type="search"
          value={text}
          placeholder={props.placeholder}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === 'Escape') {
              setText('');
              props.onSearch('');
            }
          }}
        />
        <button type="submit">Search</button>
      </div>
    </form>
  );
}

/** A modal dialog on the native <dialog>: focus moves in, Escape closes, focus returns to the opener. */
export function Dialog(props: { title: string; open: boolean; onClose: () => void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog === null) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onClose={props.onClose} onCancel={props.onClose}>
      {props.open ? (
        <>
          <h2 id={titleId}>{props.title}</h2>
          {props.children}
        </>
      ) : null}
    </dialog>
  );
}

/** An action's state and its `run` (`useAction`). */
export interface Action {
  readonly pending: boolean;
  readonly error: unknown;
  readonly run: (action: () => Promise<unknown>) => Promise<boolean>;
  readonly clearError: () => void;
}

/** Runs an action, with its pending state and its error. */
export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const run = useCallback(async (action: () => Promise<unknown>): Promise<boolean> => {
    setPending(true);
    setError(undefined);
    try {
      await action();
      return true;
    } catch (caught) {
      setError(caught);
      return false;
    } finally {
      setPending(false);
    }
  }, []);
  return { pending, error, run, clearError: () => setError(undefined) };
}

export function CopyButton(props: { value: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard
          .writeText(props.value)
          .then(() => setCopied(true))
          .catch(() => setCopied(false));
      }}
    >
      {copied ? 'Copied' : (props.label ?? 'Copy')}
    </button>
  );
}

/** A secret shown once: selectable text, a copy button, and a plain warning. */
export function SecretOnce(props: { label: string; value: string }) {
  return (
    <div className="secret-once" role="status">
      <p>
        <strong>{props.label}</strong>: copy it now. It is shown only this once.
      </p>
      <div className="secret-row">
        <code className="secret" data-testid="secret-value">
          {props.value}
        </code>
        <CopyButton value={props.value} />
      </div>
    </div>
  );
}
