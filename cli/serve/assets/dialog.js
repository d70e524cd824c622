// dialog.js -- the action dialog (dialog#action-dialog): a title, what the
// action does, the pending action and its digest (approve), how to recover
// (recover), a reason that is required; confirm calls the action (which
// tells its outcome in #toast) and closes, cancel closes.

import {clear} from './ui.js';

const $ = (id) => document.getElementById(id);

let wired = false;
let current = null; // {onConfirm}

function wire() {
  if (wired) return;
  wired = true;
  $('action-form').addEventListener('submit', (e) => {
    e.preventDefault();
    confirm();
  });
  $('action-cancel').addEventListener('click', () => close());
  $('recover-how').addEventListener('change', showResult);
  $('action-dialog').addEventListener('close', () => {
    current = null;
  });
}

function showResult() {
  $('recover-result-field').hidden = $('recover-how').value !== 'assume-done';
}

// opts: {title, about, pending: {action, digest} | null, recover: bool,
// confirm: "Stop", onConfirm({reason, how, result}) -> Promise}
export function openAction(opts) {
  wire();
  current = opts;
  $('action-title').textContent = opts.title;
  $('action-about').textContent = opts.about || '';
  $('action-pending').hidden = !opts.pending;
  $('pending-action').textContent = opts.pending ? opts.pending.action : '';
  $('pending-digest').textContent = opts.pending ? opts.pending.digest : '';
  $('recover-fields').hidden = !opts.recover;
  $('recover-how').value = 'retry';
  showResult();
  $('action-reason').value = '';
  $('action-error').textContent = '';
  $('action-confirm').textContent = opts.confirm || 'Confirm';
  $('action-confirm').disabled = false;
  $('action-dialog').showModal();
  $('action-reason').focus();
}

export function close() {
  const d = $('action-dialog');
  if (d.open) d.close();
  current = null;
}

async function confirm() {
  if (!current) return;
  const reason = $('action-reason').value.trim();
  const err = $('action-error');
  if (!reason) {
    err.textContent = 'Say why: the reason is journaled with the action.';
    $('action-reason').focus();
    return;
  }
  const args = {reason};
  if (current.recover) {
    args.how = $('recover-how').value;
    if (args.how === 'assume-done') {
      const text = $('recover-result').value;
      try {
        args.result = JSON.parse(text);
      } catch (e) {
        err.textContent = 'The result is not JSON: ' + e.message;
        return;
      }
    }
  }
  clear(err);
  $('action-confirm').disabled = true;
  const cur = current;
  try {
    await cur.onConfirm(args);
  } catch (e) {
    // The caller shows the server's refusal in #toast.
  }
  if (current === cur) close();
}
