/**
 * The dashboard's shared components and hooks, in three parts: the page's frame and its states
 * (`ui-layout.tsx`), loading resources, paged lists and tables (`ui-data.tsx`), and forms, dialogs
 * and actions (`ui-forms.tsx`). Pages import them from here.
 */
export * from './ui-layout.js';
export * from './ui-data.js';
export * from './ui-forms.js';
