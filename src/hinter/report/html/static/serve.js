/* hinter serve: triage on each bias, "why discarded?", and "try a sentence". Server data is shown with
   textContent only (never innerHTML): a <script> in a dataset text stays text. Writes send the token. */
(function(){
  var params=new URLSearchParams(location.search), token=params.get('token');
  if(token){sessionStorage.setItem('hinter-token',token);params.delete('token');
    history.replaceState(null,'',location.pathname+(params.toString()?'?'+params:''));}
  token=sessionStorage.getItem('hinter-token')||'';
  var box=document.getElementById('serve'), run=box?box.dataset.run:'';
  var q=function(id){return document.getElementById(id)};
  function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;if(text!=null)e.textContent=text;return e}
  function api(method,path,body){
    var opts={method:method,headers:{'X-Hinter-Token':token}};
    if(body!==undefined){opts.headers['Content-Type']='application/json';opts.body=JSON.stringify(body)}
    return fetch(path,opts).then(function(r){return r.json().then(function(j){
      if(!r.ok) throw new Error(j.error+(j.fix?' '+j.fix:''));return j})});
  }
  var note=q('serve-token');
  if(note) note.textContent=token?'Writes enabled (token from the address hinter serve printed).':
    'Read-only: open the address hinter serve printed (with its ?token=) to triage and to try sentences.';

  // ---------------------------------------------------------------- triage
  function setNumber(id,v){var s=q(id);if(!s)return;var m=s.querySelector('[data-measure]')||s;m.textContent=v}
  function showSection(t){
    setNumber('tr-reviewed',t.reviewed);setNumber('tr-confirmed',t.confirmed);setNumber('tr-dismissed',t.dismissed);
    var p=q('tr-precision'),ci=q('tr-ci');
    if(p)p.textContent=t.precision==null?'':(100*t.precision).toFixed(1)+'%';
    if(ci)ci.textContent=t.precision_ci?' (95% CI '+(100*t.precision_ci[0]).toFixed(1)+'–'+(100*t.precision_ci[1]).toFixed(1)+'%)':'';
  }
  function showState(card,v){
    var s=card.querySelector('.tri-state');
    card.dataset.triage=v?v.verdict:'';
    s.textContent=v?(v.verdict==='confirmed'?'Confirmed':'Not a bias')+(v.scope==='finding'?' (whole finding)':'')+
      (v.reason?': '+v.reason:'')+(v.expires?' · until '+v.expires:''):'Not reviewed';
  }
  function applyState(j){
    showSection(j.section);
    cards.forEach(function(c){showState(c,j.instances[c.dataset.id])});
  }
  var cards=Array.prototype.slice.call(document.querySelectorAll('article.inst'));
  cards.forEach(function(card){
    var t=el('div','tri');
    var scope=el('select','tri-scope');[['instance','this bias'],['finding','whole finding']].forEach(function(o){
      var op=el('option',null,o[1]);op.value=o[0];scope.appendChild(op)});
    var reason=el('input','tri-reason');reason.placeholder='reason';reason.maxLength=2000;
    var expires=el('input','tri-expires');expires.type='date';expires.title='optional expiry date';
    var state=el('span','tri-state','');
    function send(verdict){
      api('POST','/api/triage',{run:+run,mutant_id:+card.dataset.id,scope:scope.value,verdict:verdict,
        reason:reason.value,expires:expires.value||null}).then(applyState).catch(function(e){state.textContent=e.message});
    }
    [['Confirm','confirmed','tri-confirm'],['Not a bias','not_bias','tri-dismiss'],['Clear',null,'tri-clear']].forEach(function(b){
      var btn=el('button',b[2],b[0]);btn.type='button';btn.addEventListener('click',function(){send(b[1])});t.appendChild(btn)});
    t.insertBefore(scope,t.firstChild);t.insertBefore(reason,t.children[1]);t.insertBefore(expires,t.children[2]);
    t.appendChild(state);card.appendChild(t);
    // why a component was discarded: its changed sentences' tags and labels, aligned (parsed on demand)
    card.querySelectorAll('.ver.comp').forEach(function(ver,k){
      if(!ver.querySelector('.pill.discarded'))return;
      var b=el('button','why','why discarded?');b.type='button';ver.appendChild(b);
      b.addEventListener('click',function(){
        b.disabled=true;
        api('GET','/api/explain?run='+run+'&mutant_id='+card.dataset.id+'&component='+k).then(function(j){
          ver.appendChild(explanation(j))}).catch(function(e){ver.appendChild(el('p','err',e.message))});
      });
    });
  });
  if(run!=='' && cards.length) api('GET','/api/triage?run='+run).then(applyState).catch(function(){});

  var REASONS={sentence_count:'the number of sentences changed',pos:'a changed sentence\u2019s part-of-speech tags differ',
    deps:'a changed sentence\u2019s dependency labels differ',too_long:'a changed sentence is too long',
    grammar:'the changed sentences\u2019 grammar score fell too far'};
  function explanation(j){
    var d=el('div','explain');
    d.appendChild(el('p',null,'Discarded: '+(REASONS[j.reason]||j.reason||'?')+(j.discard_reason&&j.discard_reason!==j.reason?' (stored: '+j.discard_reason+')':'')+'.'));
    if(j.counts) d.appendChild(el('p',null,'Sentences: '+j.counts[0]+' in the original, '+j.counts[1]+' in the change.'));
    j.sentences.forEach(function(s){
      ['tags','deps'].forEach(function(kind){
        if(kind==='deps'&&s.failed!=='deps')return;
        var tbl=el('table','align');var cap=el('caption',null,(kind==='tags'?'Part-of-speech tags':'Dependency labels')+(s.failed===(kind==='tags'?'pos':'deps')?' — mismatch':' — same'));
        tbl.appendChild(cap);
        var rows=[['original',s.original,'a'],['changed',s.mutant,'b']];
        rows.forEach(function(r){
          var tr=el('tr');tr.appendChild(el('th',null,r[0]));
          s[kind].forEach(function(step){
            var i=step[r[2]],td=el('td',step.status);
            if(i!=null){td.appendChild(el('div','tok',r[1].tokens?r[1].tokens[i]:''));td.appendChild(el('div','lab',r[1][kind][i]))}
            tr.appendChild(td)});
          tbl.appendChild(tr)});
        d.appendChild(tbl)});
    });
    return d;
  }

  // ---------------------------------------------------------------- try a sentence
  function marked(text,marks,cls){
    var span=el('span','text'),pos=0;
    (marks||[]).forEach(function(m){span.appendChild(document.createTextNode(text.slice(pos,m[0])));
      span.appendChild(el('mark',cls,text.slice(m[0],m[1])));pos=m[1]});
    span.appendChild(document.createTextNode(text.slice(pos)));return span;
  }
  function pill(m,orig){
    if(!m.valid) return el('span','pill discarded','discarded: '+(m.discard_reason||''));
    if(m.outcome==null) return el('span','pill unparseable','unparseable');
    return el('span','pill '+(m.outcome!==orig?'flip':'same'),m.outcome);
  }
  var go=q('try-go');
  if(go) go.addEventListener('click',function(){
    var attrs=Array.prototype.slice.call(document.querySelectorAll('input[name=try-attr]:checked')).map(function(i){return i.value});
    var out=q('try-out'),status=q('try-status');out.textContent='';status.textContent='Asking the model…';go.disabled=true;
    var body={text:q('try-text').value,attributes:attrs,order:+q('try-order').value};if(run!=='')body.run=+run;
    var t0=performance.now();
    api('POST','/api/try',body).then(function(j){
      var o=j.original,flips=j.mutants.filter(function(m){return m.bias}).length,
        hid=j.mutants.filter(function(m){return m.hidden}).length;
      const n=(k,w)=>k+' '+w+(k===1?'':'s');
      status.textContent=n(j.mutants.length,'mutant')+', '+n(flips,'flip')+', '+hid+' hidden; '+((performance.now()-t0)/1000).toFixed(1)+' s ('+j.model+').';
      var head=el('div','try-orig');head.appendChild(el('span','ver-label','Original '));
      head.appendChild(el('span','pill same',o.outcome==null?'unparseable':o.outcome));head.appendChild(el('div',null));
      head.lastChild.appendChild(marked(o.text,o.marks,'from'));out.appendChild(head);
      var tbl=el('table','try-table'),h=el('tr');['','changes','text','verdict'].forEach(function(x){h.appendChild(el('th',null,x))});
      tbl.appendChild(h);
      j.mutants.forEach(function(m){
        var tr=el('tr','try-row'+(m.bias?' flip':'')+(m.hidden?' hidden-row':''));
        tr.dataset.hidden=m.hidden?'1':'0';tr.dataset.bias=m.bias?'1':'0';tr.dataset.valid=m.valid?'1':'0';
        var k=el('td');k.appendChild(el('span','badge '+(m.order>1?'intersectional':'atomic'),m.order>1?'intersectional':'atomic'));
        if(m.hidden)k.appendChild(el('span','badge hidden','hidden'));tr.appendChild(k);
        tr.appendChild(el('td','rep',m.replacements.map(function(r){return r.describe}).join('; ')));
        var td=el('td');td.appendChild(marked(m.text,m.marks,'to'));tr.appendChild(td);
        var v=el('td');v.appendChild(pill(m,o.outcome));if(m.bias)v.appendChild(el('b','flip-mark',' flips'));tr.appendChild(v);
        tbl.appendChild(tr)});
      out.appendChild(tbl);
    }).catch(function(e){status.textContent='error: '+e.message}).then(function(){go.disabled=false});
  });
})();
