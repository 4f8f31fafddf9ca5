// The run page's labels form (view/_labels.py): "j" or "n" opens the next unlabelled run in the current filter.
// Keys typed into the reason box, or pressed with a modifier, are left alone.
document.addEventListener('keydown', function (event) {
  var target = event.target;
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) { return; }
  if (target && (target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' ||
                 (target.tagName === 'INPUT' && target.type !== 'radio'))) { return; }
  if (event.key !== 'j' && event.key !== 'n') { return; }
  var next = document.getElementById('labels-next');
  if (next) {
    event.preventDefault();
    window.location.assign(next.href);
  }
});
