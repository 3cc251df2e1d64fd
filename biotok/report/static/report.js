
(function(){
  function val(td, kind){var v=td.getAttribute('data-v'); if(kind==='text') return v.toLowerCase(); if(v===''||v===null) return NaN; return parseFloat(v);}
  document.querySelectorAll('table.sortable').forEach(function(t){
    var heads=t.querySelectorAll('thead tr.cols th');
    heads.forEach(function(th, col){
      function go(){
        var kind=th.getAttribute('data-kind'); var asc=th.getAttribute('aria-sort')!=='ascending';
        heads.forEach(function(o){o.removeAttribute('aria-sort');});
        th.setAttribute('aria-sort', asc?'ascending':'descending');
        var body=t.tBodies[0]; var rows=Array.prototype.slice.call(body.rows);
        rows.sort(function(a,b){
          var x=val(a.cells[col],kind), y=val(b.cells[col],kind);
          if(kind!=='text'){ if(isNaN(x)&&isNaN(y)) return 0; if(isNaN(x)) return 1; if(isNaN(y)) return -1; }
          var r = x<y?-1:(x>y?1:0); return asc?r:-r;
        });
        rows.forEach(function(r){body.appendChild(r);});
      }
      th.addEventListener('click', go);
      th.addEventListener('keydown', function(e){ if(e.key==='Enter'||e.key===' '){e.preventDefault(); go();} });
    });
  });
  var data=document.getElementById('vocab-data'); if(!data) return;
  var V=JSON.parse(data.textContent); var selA=document.getElementById('diff-a'), selB=document.getElementById('diff-b');
  var q=document.getElementById('diff-search'); if(V.names.length>1) selB.value='1';
  var LIMIT=400;
  function fill(id, items, total){
    var ul=document.getElementById(id); ul.textContent='';
    var frag=document.createDocumentFragment();
    items.forEach(function(f){var li=document.createElement('li'); li.textContent=f; frag.appendChild(li);});
    if(total>items.length){var li=document.createElement('li'); li.className='more'; li.textContent='… '+(total-items.length).toLocaleString('en')+' more'; frag.appendChild(li);}
    ul.appendChild(frag);
  }
  function update(){
    var a=+selA.value, b=+selB.value, s=q.value.trim().toLowerCase();
    var ba=1<<a, bb=1<<b; var sh=[],oa=[],ob=[]; var ns=0,na=0,nb=0;
    for(var i=0;i<V.forms.length;i++){
      var m=V.masks[i], inA=(m&ba)!==0, inB=(m&bb)!==0; if(!inA&&!inB) continue;
      var f=V.forms[i]; if(s && f.toLowerCase().indexOf(s)<0) continue;
      if(inA&&inB){ns++; if(sh.length<LIMIT) sh.push(f);} else if(inA){na++; if(oa.length<LIMIT) oa.push(f);} else {nb++; if(ob.length<LIMIT) ob.push(f);}
    }
    fill('list-shared', sh, ns); fill('list-a', oa, na); fill('list-b', ob, nb);
    document.getElementById('n-shared').textContent='('+ns.toLocaleString('en')+')';
    document.getElementById('n-a').textContent='('+na.toLocaleString('en')+')';
    document.getElementById('n-b').textContent='('+nb.toLocaleString('en')+')';
    document.getElementById('name-a').textContent=V.names[a]; document.getElementById('name-b').textContent=V.names[b];
    var u=ns+na+nb; document.getElementById('diff-summary').textContent = s ? ('matching "'+s+'": '+u.toLocaleString('en')+' forms') : ('Jaccard '+(u? (ns/u).toFixed(3):'n/a'));
  }
  selA.addEventListener('change', update); selB.addEventListener('change', update); q.addEventListener('input', update);
  update();
})();
