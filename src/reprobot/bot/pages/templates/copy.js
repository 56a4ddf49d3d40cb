// The copy button: the only script of a page; without it the diff is still in the text box.
document.querySelectorAll("button.copy").forEach(function (button) {
  button.hidden = false;
  button.addEventListener("click", function () {
    var source = document.getElementById(button.dataset.source);
    navigator.clipboard.writeText(source.value).then(function () {
      button.textContent = "Copied";
    }, function () {
      source.select();
    });
  });
});
