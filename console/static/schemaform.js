// schemaform.js: behaviour for the run forms written by the Go package
// console/schemaform. No dependencies; include it once with
// <script src="/static/schemaform.js" defer></script>. Every element with
// data-sf on the page is set up. The form works without it (native
// constraint validation, no adding of array rows).
(function () {
  'use strict';

  // Attributes that carry a field's name (a JSON pointer) or an id
  // derived from it; a row is renumbered by rewriting their prefixes.
  var NAME_ATTRS = ['name', 'data-sf-name'];
  var ID_ATTRS = ['id', 'for', 'data-sf-id'];

  function swapPrefix(v, from, to) {
    return v.indexOf(from) === 0 ? to + v.slice(from.length) : v;
  }

  // rename rewrites names and ids under root, including the contents of
  // nested row templates, from one row prefix to another.
  function rename(root, oldName, newName, oldId, newId) {
    var els = root.querySelectorAll('*');
    for (var i = 0; i < els.length; i++) {
      var el = els[i];
      NAME_ATTRS.forEach(function (a) {
        if (el.hasAttribute(a)) el.setAttribute(a, swapPrefix(el.getAttribute(a), oldName, newName));
      });
      ID_ATTRS.forEach(function (a) {
        if (el.hasAttribute(a)) el.setAttribute(a, swapPrefix(el.getAttribute(a), oldId, newId));
      });
      if (el.hasAttribute('aria-describedby')) {
        el.setAttribute('aria-describedby', el.getAttribute('aria-describedby').split(' ').map(function (t) {
          return swapPrefix(t, oldId, newId);
        }).join(' '));
      }
      if (el.tagName === 'TEMPLATE') rename(el.content, oldName, newName, oldId, newId);
    }
  }

  function own(arr, sel) {
    return Array.prototype.filter.call(arr.querySelectorAll(sel), function (el) {
      return el.closest('[data-sf-array]') === arr;
    });
  }

  function rowsOf(arr) {
    return Array.prototype.slice.call(arr.querySelector('[data-sf-rows]').children);
  }

  // setIndex moves a row to index n: names, ids and the visible number.
  function setIndex(arr, row, n) {
    var name = arr.getAttribute('data-sf-name');
    var id = arr.getAttribute('data-sf-id');
    var old = row.getAttribute('data-sf-index');
    if (old !== String(n)) rename(row, name + '/' + old, name + '/' + n, id + '.' + old, id + '.' + n);
    row.setAttribute('data-sf-index', String(n));
    row.querySelectorAll('[data-sf-num]').forEach(function (s) {
      if (s.closest('[data-sf-row]') === row) s.textContent = String(n + 1);
    });
  }

  // limits disables Add at maxItems and Remove at minItems.
  function limits(arr) {
    var count = rowsOf(arr).length;
    var min = parseInt(arr.getAttribute('data-sf-min') || '0', 10);
    var max = parseInt(arr.getAttribute('data-sf-max') || '-1', 10);
    own(arr, '[data-sf-add]').forEach(function (b) { b.disabled = max >= 0 && count >= max; });
    rowsOf(arr).forEach(function (row) {
      var b = row.querySelector(':scope > [data-sf-remove]');
      if (b) b.disabled = count <= min;
    });
  }

  function focusFirst(el) {
    var f = el.querySelector('input:not([type=hidden]), select, textarea, button');
    if (f) f.focus();
  }

  function addRow(arr) {
    var tpl = own(arr, 'template[data-sf-template]')[0];
    var row = tpl.content.firstElementChild.cloneNode(true);
    setIndex(arr, row, rowsOf(arr).length);
    arr.querySelector('[data-sf-rows]').appendChild(row);
    row.querySelectorAll('[data-sf-array]').forEach(limits);
    limits(arr);
    focusFirst(row);
  }

  function removeRow(arr, row) {
    var rows = rowsOf(arr);
    var at = rows.indexOf(row);
    row.remove();
    rows = rowsOf(arr);
    rows.forEach(function (r, i) { setIndex(arr, r, i); });
    limits(arr);
    if (rows.length) focusFirst(rows[Math.min(at, rows.length - 1)]);
    else own(arr, '[data-sf-add]')[0].focus();
  }

  // show writes a message in the field's error slot and links it.
  function show(el, msg) {
    var slot = document.getElementById(el.id + '__err');
    if (!slot) return;
    slot.textContent = msg;
    slot.hidden = !msg;
    var ids = (el.getAttribute('aria-describedby') || '').split(' ').filter(function (t) {
      return t && t !== slot.id;
    });
    if (msg) {
      ids.push(slot.id);
      el.setAttribute('aria-invalid', 'true');
    } else {
      el.removeAttribute('aria-invalid');
    }
    if (ids.length) el.setAttribute('aria-describedby', ids.join(' '));
    else el.removeAttribute('aria-describedby');
  }

  // check mirrors what HTML attributes cannot say: the schema's
  // unanchored pattern and exclusive bounds. A server message stays until
  // the value is edited.
  function check(el) {
    if (!el.willValidate || !el.id) return true;
    var msg = '';
    var v = el.value;
    if (v !== '') {
      var p = el.getAttribute('data-sf-pattern');
      if (p) {
        try {
          if (!new RegExp(p, 'u').test(v)) msg = 'Must match the pattern ' + p;
        } catch (e) { /* the server checks it */ }
      }
      var xmin = el.getAttribute('data-sf-xmin');
      var xmax = el.getAttribute('data-sf-xmax');
      if (xmin !== null && Number(v) <= Number(xmin)) msg = 'Must be greater than ' + xmin;
      if (xmax !== null && Number(v) >= Number(xmax)) msg = 'Must be less than ' + xmax;
    }
    el.setCustomValidity(msg);
    var ok = el.checkValidity();
    if (ok && el.hasAttribute('data-sf-server-error')) return true;
    show(el, ok ? '' : el.validationMessage);
    return ok;
  }

  function controls(fields) {
    return Array.prototype.filter.call(fields.querySelectorAll('input, select, textarea'), function (el) {
      return el.type !== 'hidden' && el.id;
    });
  }

  // rawOn tells whether root is in raw mode (the fields are not posted).
  function rawOn(root) {
    var t = root.querySelector('[data-sf-rawtoggle]');
    return !!(t && t.checked);
  }

  function setup(root) {
    if (root.hasAttribute('data-sf-ready')) return;
    root.setAttribute('data-sf-ready', '');
    var fields = root.querySelector('[data-sf-fields]');
    var toggle = root.querySelector('[data-sf-rawtoggle]');
    var raw = root.querySelector('[data-sf-rawtext]');

    // Raw mode: the fields are disabled (not posted, not checked) and the
    // textarea is posted; otherwise the other way round.
    function mode() {
      fields.disabled = toggle.checked;
      raw.disabled = !toggle.checked;
      if (toggle.checked) root.querySelector('[data-sf-raw]').open = true;
    }
    toggle.addEventListener('change', mode);
    mode();

    root.addEventListener('click', function (e) {
      var b = e.target.closest('button');
      if (!b || !root.contains(b)) return;
      var arr = b.closest('[data-sf-array]');
      if (b.hasAttribute('data-sf-add')) addRow(arr);
      else if (b.hasAttribute('data-sf-remove')) removeRow(arr, b.closest('[data-sf-row]'));
    });
    root.addEventListener('input', function (e) {
      if (e.target.hasAttribute('data-sf-server-error')) {
        e.target.removeAttribute('data-sf-server-error');
        show(e.target, '');
      }
    });
    root.addEventListener('blur', function (e) {
      if (e.target.matches && e.target.matches('input, select, textarea')) check(e.target);
    }, true);
    root.querySelectorAll('[data-sf-array]').forEach(limits);
    // Our messages replace the browser's bubbles, so checks run on submit.
    var form = root.closest('form');
    if (form) form.noValidate = true;
  }

  // onSubmit runs in the capture phase on the document, before handlers
  // on the form itself (htmx's among them), and stops a submit with
  // invalid fields from reaching them.
  function onSubmit(e) {
    var roots = e.target.querySelectorAll ? e.target.querySelectorAll('[data-sf]') : [];
    var bad = [];
    Array.prototype.forEach.call(roots, function (root) {
      if (rawOn(root)) return;
      bad = bad.concat(controls(root.querySelector('[data-sf-fields]')).filter(function (el) {
        return !check(el);
      }));
    });
    if (bad.length) {
      e.preventDefault();
      e.stopPropagation();
      bad[0].focus();
    }
  }

  function init() {
    document.querySelectorAll('[data-sf]').forEach(setup);
  }
  document.addEventListener('submit', onSubmit, true);
  // htmx swaps in new forms (a refused run comes back with its errors).
  document.addEventListener('htmx:load', init);
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
