(function(){
  var box=document.getElementById('instances'); if(!box) return;
  var cards=Array.prototype.slice.call(box.querySelectorAll('article.inst'));
  var PAGE=50, shown=PAGE, more=document.getElementById('more');
  var q=function(id){return document.getElementById(id)};
  var text=cards.map(function(c){return c.textContent.toLowerCase()});
  function keyOf(c,how){
    if(how==='text') return [+c.dataset.text,+c.dataset.id];
    if(how==='combo') return [c.dataset.combo,+c.dataset.text];
    if(how==='order') return [-c.dataset.order,+c.dataset.text];
    return [-c.dataset.hidden,-c.dataset.order,+c.dataset.text,+c.dataset.id];
  }
  function cmp(a,b){for(var i=0;i<a.length;i++){if(a[i]<b[i])return -1;if(a[i]>b[i])return 1;}return 0;}
  function apply(reset){
    if(reset) shown=PAGE;
    var attr=q('f-attr').value, combo=q('f-combo').value, group=q('f-group').value, kind=q('f-kind').value, hid=q('f-hidden').value,
      aspect=q('f-aspect')?q('f-aspect').value:'';
    var s=q('f-search').value.trim().toLowerCase(), how=q('f-sort').value;
    var order=cards.map(function(c,i){return i}).sort(function(i,j){return cmp(keyOf(cards[i],how),keyOf(cards[j],how))});
    var n=0;
    order.forEach(function(i){
      var c=cards[i], ok=true;
      if(attr && c.dataset.combo.split('+').indexOf(attr)<0) ok=false;
      if(combo && c.dataset.combo!==combo) ok=false;
      if(group && c.dataset.groups.split(' ').indexOf(group)<0) ok=false;
      if(kind && c.dataset.kind!==kind) ok=false;
      // a generative run: the aspect filter keeps the biases that differ on it, and with "hidden" those hidden on it
      var on=aspect?(hid==='1'?c.dataset.hiddenOn:c.dataset.differs).split(' ').indexOf(aspect)>=0:true;
      if(aspect && !on) ok=false;
      if(hid && (aspect && hid==='0' ? c.dataset.hiddenOn.split(' ').indexOf(aspect)>=0 : c.dataset.hidden!==hid)) ok=false;
      if(s && text[i].indexOf(s)<0) ok=false;
      box.appendChild(c);
      if(ok){n++;} c.hidden=!(ok && n<=shown);
    });
    q('f-count').textContent='Showing '+Math.min(n,shown)+' of '+n+' matching biases ('+cards.length+' in all).';
    more.hidden=n<=shown;
  }
  ['f-attr','f-combo','f-group','f-kind','f-hidden','f-sort','f-aspect'].forEach(function(id){
    if(q(id))q(id).addEventListener('change',function(){apply(true)})});
  q('f-search').addEventListener('input',function(){apply(true)});
  more.addEventListener('click',function(){shown+=PAGE;apply(false)});
  apply(true);
})();
